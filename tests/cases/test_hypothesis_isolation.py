"""Drawing apart from the user's Hypothesis (padconf.cases.hypothesis_isolation): its internals
are patched only in the releases known to hold them, and elsewhere not at all, with a warning."""
import warnings

import hypothesis
import hypothesis.internal.conjecture.providers as providers
import pytest

from padconf.cases import hypothesis_isolation
from padconf.cases.hypothesis_isolation import LOCAL_CONSTANTS_RELEASES, local_constants_patchable


def test_the_pinned_hypothesis_is_patched_while_padconf_draws_and_restored_after():
    assert local_constants_patchable(hypothesis.__version_info__, providers)
    before = providers._get_local_constants
    with hypothesis_isolation.isolated_drawing():
        assert providers._get_local_constants is providers.Constants  # Hypothesis's own constants only
    assert providers._get_local_constants is before


def test_a_release_before_local_constants_needs_no_patch_and_says_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not local_constants_patchable((6, 131, 0), providers)


@pytest.mark.parametrize("version", [LOCAL_CONSTANTS_RELEASES[1], (7, 3, 1)])
def test_a_release_past_the_known_ones_is_not_patched_and_warns_once(version, monkeypatch):
    hypothesis_isolation._warn_unpatched.cache_clear()
    monkeypatch.setattr(hypothesis, "__version_info__", version)
    before = providers._get_local_constants
    with pytest.warns(UserWarning, match="may draw other cases"):
        with hypothesis_isolation.isolated_drawing():
            assert providers._get_local_constants is before  # untouched
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per version
        assert not local_constants_patchable(version, providers)


def test_a_known_release_whose_internals_moved_is_not_patched(monkeypatch):
    hypothesis_isolation._warn_unpatched.cache_clear()
    monkeypatch.delattr(providers, "CONSTANTS_CACHE")
    with pytest.warns(UserWarning):
        assert not local_constants_patchable(hypothesis.__version_info__, providers)
