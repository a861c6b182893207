"""The evaluation's result, its baseline comparison, and the Markdown and HTML reports."""
