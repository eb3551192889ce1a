"""The keyword forms of the public entry points, kept one release behind their values.

Options are values (``RecordConfig``, ``ServeOptions``, ``DeliveryPolicy``, ...): a new
option is a field, and no signature grows. The functions that used to take a dozen
keyword arguments still accept them for one release: they arrive as ``**legacy``, are
checked against the names the old signature had (a misspelt one is still a
``TypeError``), mapped onto the value, and a ``DeprecationWarning`` names the value form
to use instead. The warning is attributed to the caller's line.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping

__all__ = ["DEPRECATED", "deprecated_keywords"]

#: what every such warning starts with, so a test suite can make exactly these errors
#: (``-W "error:cassette keyword form:DeprecationWarning"``)
DEPRECATED = "cassette keyword form"


def deprecated_keywords(
    function: str, value_form: str, given: Mapping[str, object], known: Collection[str]
) -> None:
    """Warn that ``function`` was called with the keywords ``given`` (when any), naming
    ``value_form``; refuse one its old signature never had, as Python would have."""
    if not given:
        return
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    names = ", ".join(f"{name}=" for name in given)
    warnings.warn(
        f"{DEPRECATED} {function}({names}...) is deprecated and goes in the next release; "
        f"pass the options as a value: {value_form}",
        DeprecationWarning,
        stacklevel=3,
    )
