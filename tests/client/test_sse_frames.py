"""SSE framing a read at a time: frames split anywhere across reads come out whole and in order."""

from __future__ import annotations

from synth_nb.client._sse import SseFrame, SseSplitter

STREAM = (b": connected\r\n\r\nid: 1\r\nevent: rl.step\r\ndata: {\"seq\": 1}\r\n\r\n"
          b"retry: 10\nevent: status\ndata: {\"a\":\ndata: 1}\n\n"
          b"data:no-space\rid: 7\r\r: keep-alive\n\nid: bad\0id\ndata: x\n\n")

EXPECTED = [SseFrame("rl.step", b'{"seq": 1}', "1"), SseFrame("status", b'{"a":\n1}', "1"),
            SseFrame("message", b"no-space", "7"), SseFrame("message", b"x", "7")]


def test_every_split_of_a_stream_gives_the_same_frames() -> None:
    whole = SseSplitter().feed(STREAM)
    assert whole == EXPECTED
    for at in range(1, len(STREAM)):
        splitter = SseSplitter()
        assert splitter.feed(STREAM[:at]) + splitter.feed(STREAM[at:]) == EXPECTED, at


def test_an_unfinished_frame_waits_for_its_blank_line() -> None:
    splitter = SseSplitter()
    assert splitter.feed(b"id: 3\ndata: {}\n") == []
    assert splitter.feed(b"\n") == [SseFrame("message", b"{}", "3")]
