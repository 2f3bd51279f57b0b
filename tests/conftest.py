"""Suite-wide set-up."""

from __future__ import annotations

import signal

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    # A suite started in the background of a shell without job control (`cmd &` in a script, nohup)
    # inherits SIGINT ignored, and so would every command the interrupt tests start: they send
    # SIGINT on purpose and expect it handled as at a terminal. Python's own handler here makes a
    # child start with the default disposition.
    signal.signal(signal.SIGINT, signal.default_int_handler)
