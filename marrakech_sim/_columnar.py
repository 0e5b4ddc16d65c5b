"""Compiled helpers of the record writer: move rows to columns, Parquet's level encodings.

The compiled loops leave each game's move rows at a fixed stride in one int32 buffer;
Parquet wants one contiguous array per column. A numpy transpose of the buffer costs
about 6 microseconds a game; `columns_into` does it in one pass for a fraction of that.

`rle_hybrid` and `list_levels` are the per-value work of `storage`'s part writer: the
RLE / bit-packed hybrid encoding of the Parquet format (levels and dictionary indices),
https://parquet.apache.org/docs/file-format/data-pages/encodings/
"""

from __future__ import annotations

import numpy as np
from numba import njit

# a bit-packed run's header is one byte: (groups << 1) | 1 with at most 63 groups of 8
_MAX_LITERAL_GROUPS = 63


@njit(cache=True)
def columns_into(moves, stride, turns, first, players, head, lists, game, turn, start):  # type: ignore[no-untyped-def]
    """Append the first turns[g] rows of each game g (rows g*stride ...) to columns.

    From row `start` on: head[c] the move column c (head.shape[0] of them); lists[j] the
    j-th per-seat list (dirhams_after, visible_after) of each row, flat, `players`
    items a row; game the game's index (first + g); turn the row's turn. Returns the
    end row.
    """
    head_columns = head.shape[0]
    i = start
    for g in range(turns.shape[0]):
        base = g * stride
        for r in range(turns[g]):
            row = moves[base + r]
            for c in range(head_columns):
                head[c, i] = row[c]
            for j in range(lists.shape[0]):
                at = head_columns + j * players
                for s in range(players):
                    lists[j, i * players + s] = row[at + s]
            game[i] = first + g
            turn[i] = r
            i += 1
    return i


def hybrid_bound(n: int, bit_width: int) -> int:
    """Bytes `rle_hybrid` may write for n values of bit_width bits (at most)."""
    # a repeated run covers >= 8 values in <= 5 + 8 bytes; a bit-packed group of 8
    # takes bit_width bytes, plus a header byte per 63 groups
    return (n // 8 + 2) * (max(bit_width, 13) + 1) + 16


@njit(cache=True)
def rle_hybrid(values, lo, bit_width, out, pos):  # type: ignore[no-untyped-def]
    """Write values - lo (each in [0, 2**bit_width)) as Parquet's RLE / bit-packed hybrid.

    Works in groups of 8 values: where a group's 8 values are equal, a repeated run
    starts and takes every equal value after them; other groups are bit-packed (the
    last one padded with zeros: the reader knows the count). Writes into out (uint8)
    from pos, which must have room for `hybrid_bound` bytes; returns the end position.
    """
    n = values.shape[0]
    value_bytes = (bit_width + 7) // 8
    narrow = bit_width <= 8  # a group of 8 values packs into one int64 word
    spread = np.int64(0)  # 8 equal values x bit-pack to x * spread: a group test for free
    if narrow:
        for k in range(8):
            spread |= np.int64(1) << (k * bit_width)
    header = -1  # where the open bit-packed run's header byte goes; -1: none open
    groups = 0
    i = 0
    while i < n:
        whole = i + 8 <= n
        word = np.int64(0)
        uniform = False
        if narrow and whole:
            for k in range(8):
                word |= (np.int64(values[i + k]) - lo) << (k * bit_width)
            uniform = word == (np.int64(values[i]) - lo) * spread
        elif whole:
            differ = 0
            for k in range(1, 8):
                differ |= values[i + k] ^ values[i]
            uniform = differ == 0
        if uniform:
            if header >= 0:
                out[header] = (groups << 1) | 1
                header = -1
            v = values[i]
            j = i + 8
            while j < n and values[j] == v:
                j += 1
            count = (j - i) << 1
            while count >= 0x80:
                out[pos] = (count & 0x7F) | 0x80
                pos += 1
                count >>= 7
            out[pos] = count
            pos += 1
            x = np.int64(v) - lo
            for b in range(value_bytes):
                out[pos] = (x >> (8 * b)) & 0xFF
                pos += 1
            i = j
            continue
        if header < 0 or groups == _MAX_LITERAL_GROUPS:
            if header >= 0:
                out[header] = (groups << 1) | 1
            header = pos
            pos += 1
            groups = 0
        if narrow and whole:
            for b in range(bit_width):
                out[pos + b] = (word >> (8 * b)) & 0xFF
            pos += bit_width
        else:  # wide values, or the last group (padded with zeros)
            acc = np.int64(0)
            bits = 0
            for k in range(8):
                if i + k < n:
                    acc |= (np.int64(values[i + k]) - lo) << bits
                bits += bit_width
                while bits >= 8:
                    out[pos] = acc & 0xFF
                    pos += 1
                    acc >>= 8
                    bits -= 8
        groups += 1
        i += 8
    if header >= 0:
        out[header] = (groups << 1) | 1
    return pos


@njit(cache=True)
def list_levels(offsets):  # type: ignore[no-untyped-def]
    """Repetition and definition levels of a non-null list column with non-null items.

    One level pair per item, and one for each empty list: repetition 0 where a list
    starts, 1 within it; definition 2 for an item, 0 for an empty list (the schema
    `required group (LIST) { repeated group list { optional element } }`).
    """
    rows = offsets.shape[0] - 1
    n = offsets[rows] - offsets[0]
    for r in range(rows):
        if offsets[r + 1] == offsets[r]:
            n += 1
    rep = np.ones(n, np.int8)
    dfn = np.full(n, 2, np.int8)
    i = 0
    for r in range(rows):
        length = offsets[r + 1] - offsets[r]
        rep[i] = 0
        if length == 0:
            dfn[i] = 0
            i += 1
        else:
            i += length
    return rep, dfn


@njit(cache=True)
def fixed_width(offsets):  # type: ignore[no-untyped-def]
    """The common length of the lists of `offsets`, or -1 when they differ (or none)."""
    rows = offsets.shape[0] - 1
    if rows < 1:
        return -1
    width = offsets[1] - offsets[0]
    for r in range(1, rows):
        if offsets[r + 1] - offsets[r] != width:
            return -1
    return width
