"""Built-in transport plugins; each registers through the ``cassette.transports`` group.

Nothing is imported here on purpose: loading one transport must not pay for the others.
"""
