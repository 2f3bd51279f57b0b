"""Mesa agents: the Developer, the coding-agent Session and the Backend fleet."""

from speedtrap.agents.activity import Activity, ActivityRecorder
from speedtrap.agents.backend import Backend
from speedtrap.agents.developer import Developer, TaskFeed
from speedtrap.agents.session import Session
from speedtrap.agents.task import Task, TurnDraws

__all__ = ["Activity", "ActivityRecorder", "Backend", "Developer", "Session", "Task", "TaskFeed", "TurnDraws"]
