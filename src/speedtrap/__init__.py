"""speedtrap: is fast LLM inference worth it for people who code with agents?

An agent-based simulator (Mesa 3.5) of developers handing coding tasks to LLM coding agents
served by simulated inference backends; it measures where every developer-second goes.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
