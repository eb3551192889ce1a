"""How a command's ``--help`` reads: a short usage line naming the command, its options
in groups, and a few examples at the end.

A ``Layout`` is only a value hung on the parser; it is applied when help is printed
(``Parser.format_help``), so a replay, which parses its options on every start, never
pays for arranging help it does not show.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

import attrs

__all__ = ["Layout", "apply_layout"]


@attrs.frozen
class Layout:
    """``usage``: the usage line after ``usage:``; ``groups``: a title and the ``dest`` of
    each option under it, in order (a ``dest`` the parser lacks is skipped, so an option
    added later lands in "options" until listed); ``examples``: one command a line."""

    usage: str
    groups: Mapping[str, Sequence[str]]
    examples: Sequence[str] = ()


def apply_layout(parser: argparse.ArgumentParser, layout: Layout) -> None:
    """Move ``parser``'s options into ``layout``'s groups and put its examples before any
    epilog the command already has."""
    parser.usage = layout.usage
    actions = {action.dest: action for action in parser._actions}
    for title, dests in layout.groups.items():
        group = parser.add_argument_group(title)
        for dest in dests:
            action = actions.get(dest)
            if action is None:
                continue
            for other in parser._action_groups:
                if action in other._group_actions:
                    other._group_actions.remove(action)
            group._group_actions.append(action)
    if layout.examples:
        lines = "\n".join(f"  {example}" for example in layout.examples)
        rest = f"\n\n{parser.epilog}" if parser.epilog else ""
        parser.epilog = f"Examples:\n{lines}{rest}"
