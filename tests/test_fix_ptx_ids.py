"""The internal-linkage ids of nvcc 13's PTX, normalised whole for `fix --verify`'s before/after comparison: the
directory hash, the tail after the file name and nvcc's process id, read to the length the mangled name gives."""
from __future__ import annotations

from auditor.fix.ptx_ids import normalise_internal_ids


def _var(prefix_len: str, tail: str, rest: str = "3ops7counterE") -> bytes:
    return f".global .align 4 .u32 _ZN{prefix_len}_INTERNAL_2d851695_4_k_cu_e57f7d8f{tail}{rest};\n".encode()


def test_a_process_id_of_another_length_normalises_to_the_same_name():
    """`_28651` and `_100234`: the mangled length before the id changes with it (40, 41)."""
    assert normalise_internal_ids(_var("40", "_28651")) == normalise_internal_ids(_var("41", "_100234"))


def test_the_name_after_the_id_still_counts():
    assert normalise_internal_ids(_var("40", "_28651")) != \
        normalise_internal_ids(_var("40", "_28651", "3ops5totalE"))
    assert normalise_internal_ids(_var("40", "_28651")) != \
        normalise_internal_ids(_var("40", "_28651", "4opsx7counterE"))


def test_an_inline_namespace_digit_before_an_anonymous_namespace_is_kept_apart():
    """`3__4` (the inline namespace `__4`) then `44_GLOBAL__N__...`: the id's length is 44, not 444."""
    before = b"_ZN4cuda3std3__444_GLOBAL__N__09d20f34_6_pad_cu_e41e3b2c_238766ignoreE"
    after = b"_ZN4cuda3std3__444_GLOBAL__N__09d20f34_6_pad_cu_e41e3b2c_248356ignoreE"
    other = b"_ZN4cuda3std3__544_GLOBAL__N__09d20f34_6_pad_cu_e41e3b2c_248356ignoreE"
    assert normalise_internal_ids(before) == normalise_internal_ids(after)
    assert normalise_internal_ids(before) != normalise_internal_ids(other)


def test_the_external_name_and_hash_tails_lose_only_the_id():
    """`_INTERNAL_<hash>_4_a_cu__Z1kPf` (the first external function's name as the tail) and a hash tail without a
    process id: the id goes, the code around it stays."""
    first = b"ld.global.u32 %r1, [_ZN32_INTERNAL_6add1412_4_a_cu__Z1kPf4ops7counterE];"
    moved = b"ld.global.u32 %r1, [_ZN32_INTERNAL_9bbd0001_4_a_cu__Z1kPf4ops7counterE];"
    assert normalise_internal_ids(first) == normalise_internal_ids(moved)
    assert normalise_internal_ids(first) == b"ld.global.u32 %r1, [_ZN_INTERNAL_ID_4ops7counterE];"
    hashed = b"_ZN53_INTERNAL_6227bd7b_22_causal_product_cuda_cu_e82e28cd4cuda3std3__48in_placeE"
    assert normalise_internal_ids(hashed) == b"_ZN_INTERNAL_ID_4cuda3std3__48in_placeE"
