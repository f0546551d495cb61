"""The placeholder embedder of knowledge §11.2 and its golden values."""

from __future__ import annotations

import numpy as np
import pytest

from ragit.config import defaults
from ragit.embed import embedder_id_for, load_embedder
from ragit.embed.base import Embedder
from ragit.embed.placeholder import PlaceholderEmbedder
from ragit.errors import RagitError


def _placeholder_config(dimensions: int = 64):
    config = defaults()
    config["embedding"]["provider"] = "placeholder"
    config["embedding"]["dimensions"] = dimensions
    return config


@pytest.mark.parametrize(
    ("text", "first_four"),
    [
        ("auth", [-0.047584, 0.066244, -0.032656, -0.015861]),
        ("restore auth context", [0.17085, -0.036645, -0.096609, 0.057584]),
    ],
)
def test_golden_values(text, first_four):
    vector = PlaceholderEmbedder().embed([text])[0]
    assert [round(float(x), 6) for x in vector[:4]] == first_four


def test_shape_dtype_and_norms():
    vectors = PlaceholderEmbedder().embed(["auth", "Restore auth context", "", "-- !!"])
    assert vectors.shape == (4, 64)
    assert vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-6)
    assert not vectors[2:].any()  # no tokens => zero vector


def test_empty_batch():
    assert PlaceholderEmbedder().embed([]).shape == (0, 64)


def test_tokens_drive_the_vector():
    embed = PlaceholderEmbedder().embed
    same = embed(["Restore auth-context", "restore AUTH context"])
    assert np.array_equal(same[0], same[1])
    # duplicates count: a repeated token pulls the direction towards itself
    once, twice = embed(["auth context", "auth auth context"])
    assert not np.allclose(once, twice)
    # deterministic and independent of the batch
    assert np.array_equal(embed(["auth", "x"])[0], embed(["auth"])[0])


def test_satisfies_the_protocol():
    embedder = PlaceholderEmbedder()
    assert isinstance(embedder, Embedder)
    assert (embedder.id, embedder.dimensions) == ("placeholder:sha1:64:v1", 64)


def test_chosen_by_config():
    config = _placeholder_config()
    assert embedder_id_for(config) == "placeholder:sha1:64:v1"
    embedder = load_embedder(config)
    assert isinstance(embedder, PlaceholderEmbedder)
    assert load_embedder(config) is embedder


def test_dimensions_must_match():
    with pytest.raises(RagitError) as info:
        load_embedder(_placeholder_config(256))
    err = info.value
    assert err.code == "EMBEDDER_UNAVAILABLE"
    assert err.details["embedderId"] == "placeholder:sha1:64:v1"
    assert "256" in err.details["reason"]
    assert err.recovery == "ragit doctor"
