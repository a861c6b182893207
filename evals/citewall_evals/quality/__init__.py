"""Answer quality: the support judge and its calibration, citation recall and precision,
dangling references in member prose."""
