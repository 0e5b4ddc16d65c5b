"""Compiled helpers of the record writer: move rows to columns, Parquet's level encodings.

The compiled loop writes the move rows of a batch of games by column
(arena.loop.play_batch), into a buffer that stays in the core's cache; `columns_into`
appends them to the chunk's columns, a contiguous copy for each move column, the
per-seat lists with a row's items together.

The rest is the per-value work of `storage`'s part writer: the body of a data page,
its levels and dictionary indices in the RLE / bit-packed hybrid encoding of the Parquet
format, https://parquet.apache.org/docs/file-format/data-pages/encodings/
"""

from __future__ import annotations

import numpy as np
from numba import njit

from marrakech_sim.play.turns import is_outcome

# a bit-packed run's header is one byte: (groups << 1) | 1 with at most 63 groups of 8
_MAX_LITERAL_GROUPS = 63
_LITERAL_RUN = 8 * _MAX_LITERAL_GROUPS  # values in the longest bit-packed run


@njit(cache=True)
def columns_into(moves, turns, first, players, head, lists, game, turn, start):
    """Append the rows of games first, first + 1, ... (turns[g] rows of game g, one game
    after another from row 0 of `moves`, by column: arena.loop.play_batch) to columns.

    From row `start` on: head[c] the move column c (head.shape[0] of them); lists[j] the
    j-th per-seat list (dirhams_after, visible_after) of each row, flat, `players`
    items a row; game the game's index (first + g); turn the row's turn. Returns the
    end row.
    """
    # through 1D slices, which numba knows are contiguous: the copies vectorise (0.53 ->
    # 0.13 us a 4-player game, against indexing the 2D arrays)
    i = start
    for g in range(turns.shape[0]):
        n = turns[g]
        games = game[i : i + n]
        turns_of = turn[i : i + n]
        for r in range(n):
            games[r] = first + g
            turns_of[r] = r
        i += n
    rows = i - start
    replay_only = moves.shape[0] == head.shape[0]  # no per-seat rows: no outcome column
    for c in range(head.shape[0]):
        if replay_only and is_outcome(c):
            continue
        source = moves[c, :rows]
        to = head[c, start:i]
        for r in range(rows):
            to[r] = source[r]
    for j in range(lists.shape[0]):
        items = lists[j, start * players : i * players]
        for s in range(players):
            source = moves[head.shape[0] + j * players + s, :rows]
            for r in range(rows):
                items[r * players + s] = source[r]
    return i


def hybrid_bound(n: int, bit_width: int) -> int:
    """Bytes `rle_hybrid` may write for n values of bit_width bits (at most)."""
    # a repeated run covers >= 8 values in <= 5 + 8 bytes; a bit-packed group of 8
    # takes bit_width bytes, plus a header byte per 63 groups; 16 more: room for the
    # 8-byte stores that may write past the end
    return (n // 8 + 2) * (max(bit_width, 13) + 1) + 16


@njit(cache=True, inline="always")
def _new_literal_run(out, header, groups, pos):
    """Close the open bit-packed run (if any; header is -1 when none is) and open one
    whose header byte is at pos: the new (header, groups, pos)."""
    if header >= 0:
        out[header] = (groups << 1) | 1
    return pos, 0, pos + 1


@njit(cache=True)
def rle_hybrid(values, lo, bit_width, out, pos):
    """Write values - lo (each in [0, 2**bit_width)) as Parquet's RLE / bit-packed hybrid.

    Works in groups of 8 values: where a group's 8 values are equal, a repeated run
    starts and takes every equal value after them; other groups are bit-packed (the
    last one padded with zeros: the reader knows the count). Writes into out (uint8)
    from pos, which must have room for `hybrid_bound` bytes; returns the end position.
    Bytes of out past the end position may be overwritten too (by up to 7).
    """
    n = values.shape[0]
    narrow = bit_width <= 8  # a group of 8 values packs into one int64 word
    spread = np.int64(0)  # 8 equal values x bit-pack to x * spread: a group test for free
    if narrow:
        for k in range(8):
            spread |= np.int64(1) << (k * bit_width)
    header = -1  # where the open bit-packed run's header byte goes; -1: none open
    groups = 0
    i = 0
    while i < n:
        if narrow and i + 8 <= n:  # the common case, in a few instructions a value
            # unsigned indices: numba then adds no negative-index wraparound to each access
            # (which also kept the byte stores below from merging): twice as fast
            at = np.uint64(i)
            word = np.int64(0)
            for k in range(8):
                word |= (np.int64(values[at + np.uint64(k)]) - lo) << (k * bit_width)
            uniform = word == (np.int64(values[at]) - lo) * spread
            if not uniform:
                if header < 0 or groups == _MAX_LITERAL_GROUPS:
                    header, groups, pos = _new_literal_run(out, header, groups, pos)
                # the whole word in one 8-byte store (the compiler merges the byte stores):
                # the bytes past bit_width are written over by what follows
                to = np.uint64(pos)
                for b in range(8):
                    out[to + np.uint64(b)] = (word >> (8 * b)) & 0xFF
                pos += bit_width
                groups += 1
                i += 8
                continue
        else:
            uniform = False
            if i + 8 <= n:
                differ = 0
                for k in range(1, 8):
                    differ |= values[i + k] ^ values[i]
                uniform = differ == 0
        if uniform:
            if header >= 0:
                out[header] = (groups << 1) | 1
                header = -1
            v = values[i]
            j, end = np.uint64(i + 8), np.uint64(n)  # (unsigned with unsigned: no float)
            while j + np.uint64(8) <= end:  # 8 values a step while they all equal v
                differ = values[j] ^ v
                for k in range(1, 8):
                    differ |= values[j + np.uint64(k)] ^ v
                if differ != 0:
                    break
                j += np.uint64(8)
            while j < end and values[j] == v:
                j += np.uint64(1)
            run = int(np.int64(j)) - i
            pos = _repeated(np.int64(v) - lo, run, bit_width, out, pos)
            i += run
            continue
        if header < 0 or groups == _MAX_LITERAL_GROUPS:
            header, groups, pos = _new_literal_run(out, header, groups, pos)
        # wide values, or the last group (padded with zeros)
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
def value_range(values, valid):
    """(lo, hi, count) of the values where valid != 0 (valid empty: all); hi < lo if none."""
    n = values.shape[0]
    if valid.shape[0] == 0:  # branch-free min and max
        if n == 0:
            return np.int64(0), np.int64(-1), 0
        low = high = values[0]  # in the values' own type: vectorised
        for i in range(1, n):
            low = min(low, values[i])
            high = max(high, values[i])
        return np.int64(low), np.int64(high), n
    top = np.int64(np.iinfo(np.int64).max)
    bottom = np.int64(np.iinfo(np.int64).min)
    lo, hi = top, bottom
    count = np.int64(0)
    for i in range(n):  # branch-free too: in some columns half the rows are null
        present = np.int64(valid[i] != 0)
        v = np.int64(values[i])
        keep = present - 1  # 0 where present, all ones where null
        lo = min(lo, v ^ ((v ^ top) & keep))  # v, or top where null
        hi = max(hi, v ^ ((v ^ bottom) & keep))
        count += present
    if count == 0:
        return np.int64(0), np.int64(-1), 0
    return lo, hi, count


@njit(cache=True)
def _repeated(value, count, bit_width, out, pos):
    """One repeated run of `count` values `value` (count > 0)."""
    header = count << 1
    while header >= 0x80:
        out[pos] = (header & 0x7F) | 0x80
        pos += 1
        header >>= 7
    out[pos] = header
    pos += 1
    for b in range((bit_width + 7) // 8):
        out[pos] = (value >> (8 * b)) & 0xFF
        pos += 1
    return pos


@njit(cache=True)
def _length_prefixed(out, start, end):
    """Write the 4-byte little-endian length of out[start + 4:end] at start; return end."""
    length = end - start - 4
    for b in range(4):
        out[start + b] = (length >> (8 * b)) & 0xFF
    return end


@njit(cache=True)
def flat_levels(valid, rows, out):
    """Definition levels of an optional flat column (1 present, 0 null), length-prefixed.

    valid: int8 per row (empty: no row is null). Returns the end position in out.
    """
    if valid.shape[0] == 0:
        end = _repeated(1, rows, 1, out, 4) if rows else 4
    else:
        end = rle_hybrid(valid, 0, 1, out, 4)
    return _length_prefixed(out, 0, end)


@njit(cache=True)
def list_levels(offsets, out):
    """Repetition then definition levels of a list column, each length-prefixed.

    The schema `required group (LIST) { repeated group list { optional element } }` with
    lists and items never null: one level pair per item, and one for each empty list;
    repetition 0 where a list starts, 1 within it; definition 2 for an item, 0 for an
    empty list. Returns (end position in out, number of level pairs).
    """
    rows = offsets.shape[0] - 1
    items = offsets[rows] - offsets[0]
    width = offsets[1] - offsets[0] if rows else 0
    for r in range(1, rows):
        if offsets[r + 1] - offsets[r] != width:
            width = -1
            break
    if width > 0 and _LITERAL_RUN % width == 0:
        # lists of one width: the repetition levels repeat every _LITERAL_RUN values,
        # one bit-packed run, copied; the definition levels are all 2, one repeated run
        pattern = np.ones(_LITERAL_RUN, np.int8)
        for i in range(0, _LITERAL_RUN, width):
            pattern[i] = 0
        block = rle_hybrid(pattern, 0, 1, out, 4) - 4
        pos = 4
        for _ in range(items // _LITERAL_RUN):
            for b in range(block):
                out[pos + b] = out[4 + b]
            pos += block
        pos = rle_hybrid(pattern[: items % _LITERAL_RUN], 0, 1, out, pos)
        pos = _length_prefixed(out, 0, pos)
        end = _repeated(2, items, 2, out, pos + 4) if items else pos + 4
        return _length_prefixed(out, pos, end), items
    n = items
    for r in range(rows):
        if offsets[r + 1] == offsets[r]:
            n += 1
    rep = np.ones(n, np.int8)
    dfn = np.full(n, 2, np.int8)
    i = 0
    for r in range(rows):
        rep[i] = 0
        if offsets[r + 1] == offsets[r]:
            dfn[i] = 0
            i += 1
        else:
            i += offsets[r + 1] - offsets[r]
    pos = _length_prefixed(out, 0, rle_hybrid(rep, 0, 1, out, 4))
    return _length_prefixed(out, pos, rle_hybrid(dfn, 0, 2, out, pos + 4)), n


@njit(cache=True)
def dictionary_indices(values, valid, lo, bit_width, out, pos):
    """An RLE_DICTIONARY page's values: the bit width, then values - lo of the valid rows.

    valid: int8 per value (empty: all valid). Returns the end position in out.
    """
    out[pos] = bit_width
    if valid.shape[0] == 0:
        return rle_hybrid(values, lo, bit_width, out, pos + 1)
    present = np.empty(valid.shape[0], values.dtype)
    j = 0
    for i in range(valid.shape[0]):  # branch-free: write every value, keep the valid ones
        present[j] = values[i]
        j += valid[i] != 0
    return rle_hybrid(present[:j], lo, bit_width, out, pos + 1)
