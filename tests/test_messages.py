"""A recorded request is a view onto the one stored transcript, and behaves as the tuple it replaces."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentloops.messages import Message, TranscriptView, detached

MESSAGES = [Message("user", "count the lines")] + [
    Message("tool", f"result {n}", (), f"c{n}", "read_file") for n in range(1, 12)
]
bounds = st.none() | st.integers(-15, 15)


def view_and_copy(total: int, length: int) -> tuple[TranscriptView, tuple[Message, ...]]:
    """A view of the first ``length`` of ``total`` messages, the tuple it stands for, then more appended."""
    transcript = list(MESSAGES[:total])
    view, copy = TranscriptView(transcript, length), tuple(transcript[:length])
    transcript.extend(MESSAGES[total:])  # later rounds append; the view must not see them
    return view, copy


sizes = st.integers(0, len(MESSAGES)).flatmap(lambda total: st.tuples(st.just(total), st.integers(0, total)))


@given(sizes, bounds, bounds, st.none() | st.integers(-4, 4).filter(bool))
def test_slices_match_the_tuple(size, start, stop, step):
    view, copy = view_and_copy(*size)
    piece = view[start:stop:step]
    assert type(piece) is tuple and piece == copy[start:stop:step]


@given(sizes, st.integers(-15, 15))
def test_indexing_matches_the_tuple_including_out_of_range(size, index):
    view, copy = view_and_copy(*size)
    if -len(copy) <= index < len(copy):
        assert view[index] is copy[index]
    else:
        with pytest.raises(IndexError):
            view[index]


@given(sizes)
def test_len_iteration_equality_hash_and_search_match_the_tuple(size):
    view, copy = view_and_copy(*size)
    assert len(view) == len(copy) and tuple(view) == copy and list(reversed(view)) == list(reversed(copy))
    assert view == copy and copy == view and (view != copy) is False
    assert hash(view) == hash(copy)
    assert view != (*copy, MESSAGES[0])
    assert not copy or view != copy[:-1]
    assert (MESSAGES[-1] in view) == (MESSAGES[-1] in copy)
    assert view.count(MESSAGES[0]) == copy.count(MESSAGES[0])
    assert view + (MESSAGES[0],) == (*copy, MESSAGES[0])  # noqa: RUF005 — concatenation is what is tested
    assert (MESSAGES[0],) + view == (MESSAGES[0], *copy)  # noqa: RUF005
    assert repr(view) == repr(copy)


def test_equality_needs_the_same_messages_not_the_same_list():
    one, two = list(MESSAGES), list(MESSAGES)
    assert TranscriptView(one, 3) == TranscriptView(two, 3)
    assert TranscriptView(one, 3) != TranscriptView(two, 4)
    assert TranscriptView(one, 3) != TranscriptView(one, 4)  # two requests of one run differ by their length
    assert TranscriptView(one, 3) != TranscriptView([*one[:2], MESSAGES[5]], 3)
    assert TranscriptView(one, 2) != list(one[:2])  # like a tuple, never equal to a list


def test_bad_indices_fail_as_on_a_tuple():
    view = TranscriptView(list(MESSAGES), 3)
    with pytest.raises(TypeError):
        view["0"]  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        view[::0]


def test_pickling_round_trips_and_stores_the_shared_transcript_once():
    transcript = list(MESSAGES)
    views = [TranscriptView(transcript, n) for n in range(1, len(transcript) + 1)]
    restored = pickle.loads(pickle.dumps(views))
    assert restored == views and [tuple(v) for v in restored] == [tuple(transcript[:n]) for n in range(1, 13)]
    one = len(pickle.dumps(views[-1]))
    assert len(pickle.dumps(views)) < one + 20 * len(views)  # a few bytes per extra view, no copy of messages


def test_detached_copies_only_what_could_still_change():
    view, messages = TranscriptView(list(MESSAGES), 2), tuple(MESSAGES)
    assert detached(view) is view and detached(messages) is messages
    mutable = list(MESSAGES[:2])
    copy = detached(mutable)
    mutable.append(MESSAGES[3])
    assert copy == tuple(MESSAGES[:2])
