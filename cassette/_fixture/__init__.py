"""The parts of the pytest plugin (``cassette.pytest_plugin``, which pytest loads): what
the fixture is told (``settings``), the fixture's value (``fixture.MCPCassette``), and
what it runs in a thread of its own (``threads``)."""
