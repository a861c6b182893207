"""What internal knowledge reached each member (docs/distillation.md): the exposure rows
written with a turn (``rows``), the reservations that hold a turn's cards against the member's
budget until it is stored (``reservations``), the admin report over them (``report``) and the
answers behind one member's exposure (``answers``)."""
