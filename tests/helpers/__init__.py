"""What the suite's tests share: helpers to run the command line and its servers
(``support``), the bad-input catalogue (``catalogue``), the HTTP probes' expectations
(``http_probes``), long cassettes for the opening (``opening_tapes``), the fake secrets and
their contexts (``secret_corpus``, ``secret_contexts``), the docs' pages (``docs_pages``)
and the local wheelhouse (``wheelhouse``). A test file imports from here, never from
another test file.
"""
