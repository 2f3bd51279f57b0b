"""``speedtrap app``: an interactive browser app (Solara) to explore a scenario.

The app imports the model, never the reverse, and Solara is imported only when the app is used
(:mod:`speedtrap.app.page`); :mod:`~speedtrap.app.settings`, :mod:`~speedtrap.app.live`,
:mod:`~speedtrap.app.figures` and :mod:`~speedtrap.app.break_even` are plain Python.
"""

from speedtrap.app.server import PAGE_MODULE, serve

__all__ = ["PAGE_MODULE", "serve"]
