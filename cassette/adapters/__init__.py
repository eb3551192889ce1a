"""Adapters between cassette sessions and other libraries' client APIs.

Each adapter imports its library only when it is itself imported, behind an optional
extra: ``cassette.adapters.mcp_sdk`` needs ``pip install 'cassette-mcp[mcp]'``. The core
package never imports any of them.
"""
