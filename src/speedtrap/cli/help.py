"""Help text that reads cleanly in ``speedtrap <command> --help`` (typer's rich panels).

Typer renders help as rich markup and keeps the single line breaks of every paragraph but the first,
so a docstring wrapped at the source's width would break mid-sentence, a bracketed note such as
``[default: …]`` or ``'speedtrap[app]'`` would vanish as an unknown markup tag (leaving "tokens ."),
and every plain flag would show ``<bool>`` in the type column. :class:`HelpTyper` makes every
command and group it creates (:class:`HelpCommand`, :class:`HelpGroup`) join each paragraph into
one line, escape brackets, list a command by its first sentence and show no type for flags.
"""

from __future__ import annotations

import re
from typing import Any

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=[A-Z])")
"""The end of a sentence: a full stop (not of "e.g." or "i.e.") before a capital."""


def tidy_help(text: str | None) -> str | None:
    """``text`` with each paragraph on one line (a paragraph starting with click's ``\\b`` marker is
    kept as written, as is anything after a form feed) and rich markup escaped."""
    if not text:
        return text
    shown, cut, rest = text.partition("\f")
    paragraphs = re.split(r"\n\s*\n", shown.strip())
    joined = [p if p.startswith("\b") else _one_line(p) for p in paragraphs]
    return escape("\n\n".join(joined)) + cut + rest


def _one_line(paragraph: str) -> str:
    return " ".join(line.strip() for line in paragraph.splitlines())


def first_sentence(text: str | None) -> str | None:
    """The first sentence of the first paragraph of ``text`` (for a group's list of commands)."""
    if not text:
        return text
    first = re.split(r"\n\s*\n", text.partition("\f")[0].strip())[0]
    return _SENTENCE_END.split(_one_line(first), maxsplit=1)[0]


def _no_flag_type(param: Any) -> None:
    if getattr(param, "is_flag", False) and param.metavar is None:
        param.metavar = ""  # a flag takes no value: no "<bool>" in the type column


def _tidy_params(params: list[Any]) -> None:
    for param in params:
        help_text = getattr(param, "help", None)
        if help_text:
            param.help = tidy_help(help_text)
        _no_flag_type(param)


class _TidyHelp:
    """Mixin for typer commands and groups: help text, short help and flag types tidied once."""

    help: str | None
    short_help: str | None
    params: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.short_help is None and self.help:
            self.short_help = escape(first_sentence(self.help) or "")
        self.help = tidy_help(self.help)
        _tidy_params(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:  # made once and cached by the command
            _no_flag_type(option)
        return option


class HelpCommand(_TidyHelp, TyperCommand):
    """A typer command whose help renders cleanly (see the module docstring)."""


class HelpGroup(_TidyHelp, TyperGroup):
    """A typer group whose help renders cleanly (see the module docstring)."""


class HelpTyper(typer.Typer):
    """``typer.Typer`` whose commands and groups are :class:`HelpCommand` and :class:`HelpGroup`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cls", HelpGroup)
        super().__init__(*args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cls", HelpCommand)
        return super().command(*args, **kwargs)
