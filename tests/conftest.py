"""Suite-wide settings: Hypothesis runs without per-example deadlines, because CI machines
are shared and noisy and no test here may depend on timing to pass."""

from hypothesis import settings

settings.register_profile("cassette", deadline=None, print_blob=True)
settings.load_profile("cassette")
