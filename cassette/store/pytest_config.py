"""The pytest plugin's project settings: ``[tool.cassette.pytest]``, checked, with the
project-wide keys the plugin uses. Apart from ``cassette.store.config`` so that a replay,
which reads the project's settings too, does not build a class only the plugin needs."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import attrs

from cassette.store.config import (
    find_pyproject,
    ignore_params_for,
    load_settings,
    probe_setting,
    setting_error,
)

__all__ = ["PytestSettings", "pytest_settings"]


_PYTEST_KEYS: Final = {
    "cassette-dir": str,
    "mode": str,
    "strategy": str,
    "fail-on-unused": bool,
    "record-on-failure": bool,
    "probe": bool,
}


@attrs.frozen
class PytestSettings:
    """``[tool.cassette.pytest]``, checked, plus the project-wide keys the plugin uses."""

    root: Path | None = None
    cassette_dir: Path | None = None
    mode: str | None = None
    strategy: str | None = None
    fail_on_unused: bool = False
    record_on_failure: bool = False
    ignore_params: tuple[str, ...] = ()
    before_record: str | None = None
    #: whether recordings probe the server beside the session (``probe`` here, else in
    #: ``[tool.cassette]``; ``cassette.runtime.probe``)
    probe: bool = True


def pytest_settings(start: Path | None = None) -> PytestSettings:
    """The plugin's project settings from the pyproject.toml nearest ``start``; a bad key
    or value is a ``UsageError`` naming ``file:line``."""
    settings = load_settings(start)
    path = find_pyproject(start)
    section = settings.get("pytest", {})
    if not isinstance(section, dict):
        raise setting_error(start, "tool.cassette", "pytest", "must be a table")
    for key, value in section.items():
        wanted = _PYTEST_KEYS.get(key)
        if wanted is None:
            from cassette.core.words.suggest import did_you_mean

            known = ", ".join(_PYTEST_KEYS)
            guess = did_you_mean(key, _PYTEST_KEYS)
            raise setting_error(
                start, "tool.cassette.pytest", key, f"is not a setting{guess}; use {known}"
            )
        if not isinstance(value, wanted):
            raise setting_error(start, "tool.cassette.pytest", key, f"must be a {wanted.__name__}")
    hook = settings.get("before-record")
    if hook is not None and not isinstance(hook, str):
        raise setting_error(start, "tool.cassette", "before-record", 'must be "module:function"')
    root = path.parent if path is not None else None
    folder = section.get("cassette-dir")
    return PytestSettings(
        root=root,
        cassette_dir=None if folder is None or root is None else root / folder,
        mode=section.get("mode"),
        strategy=section.get("strategy"),
        fail_on_unused=section.get("fail-on-unused", False),
        record_on_failure=section.get("record-on-failure", False),
        ignore_params=ignore_params_for(settings, start=start),
        before_record=hook,
        probe=section.get("probe", probe_setting(None, start)),
    )
