# SPDX-License-Identifier: MIT
# memaccept: tests of the QEMU case verdict in tests/run.py, above all the emulated host's stop.
import os
import sys
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import run  # noqa: E402  tests/run.py
import runqemu  # noqa: E402
import memaccept_log  # noqa: E402

STOPPED = memaccept_log.EXIT_HOST_STOPPED


def result(guest_code):
    """What runqemu.run returns, for a guest that wrote guest_code to isa-debug-exit."""
    return types.SimpleNamespace(timed_out=False, seconds=1.0, output="",
                                 qemu_rc=(guest_code << 1) | 1, guest_code=guest_code)


def exit_event(code):
    return [{"event": "exit", "code": code}]


TDX_FATAL = {"name": "x", "args": "platform=tdx-emu fake_unaccepted_start=1G", "exit": 7}


class HostStopRule(unittest.TestCase):
    def test_stop_with_the_guests_verdict_passes(self):
        self.assertEqual(run.check_case(TDX_FATAL, result(STOPPED), exit_event(7)), [])

    def test_stop_with_another_verdict_fails(self):
        problems = run.check_case(TDX_FATAL, result(STOPPED), exit_event(2))
        self.assertTrue(any("exit event says 2" in p for p in problems), problems)

    def test_stop_before_any_verdict_fails(self):
        problems = run.check_case(TDX_FATAL, result(STOPPED), [])
        self.assertTrue(any("before the guest printed" in p for p in problems), problems)

    def test_guest_writing_its_own_code_where_the_host_must_stop_it_fails(self):
        # The old emulator turned the fatal report back into the guest's exit code.
        problems = run.check_case(TDX_FATAL, result(7), exit_event(7))
        self.assertTrue(any("did not stop" in p for p in problems), problems)

    def test_unexpected_stop_fails(self):
        case = dict(TDX_FATAL, exit=0)
        problems = run.check_case(case, result(STOPPED), exit_event(0))
        self.assertTrue(any("expects it not to" in p for p in problems), problems)

    def test_verdicts_kept_from_the_host_and_plain_platforms(self):
        for code in (0, 1, 5):
            case = dict(TDX_FATAL, exit=code)
            self.assertFalse(run.expects_host_stop(case))
            self.assertEqual(run.check_case(case, result(code), exit_event(code)), [])
        plain = {"name": "x", "args": "fake_unaccepted_start=1G", "exit": 7}
        self.assertFalse(run.expects_host_stop(plain))
        self.assertEqual(run.check_case(plain, result(7), exit_event(7)), [])
        self.assertTrue(run.expects_host_stop(dict(plain, args="platform=snp-emu")))

    def test_override_for_a_vcpu_the_host_never_resumes(self):
        case = {"name": "x", "args": "platform=tdx-emu", "exit": 0, "host_stops": True,
                "allow_no_exit_event": True}
        self.assertEqual(run.check_case(case, result(STOPPED), []), [])
        self.assertNotEqual(run.check_case(case, result(0), exit_event(0)), [])


class CBitAliasPieces(unittest.TestCase):
    """Guest RAM cut for the C-bit alias: where q35 puts each piece, each a PCI BAR."""
    GiB = 1 << 30

    def pieces(self, size):
        return runqemu.c_bit_alias_pieces(size)

    def test_small_ram_is_one_piece(self):
        self.assertEqual(self.pieces(2 * self.GiB), [(0, 2 * self.GiB)])

    def test_ram_above_4g_starts_a_piece_at_4g(self):
        g = self.GiB
        self.assertEqual(self.pieces(4 * g), [(0, 2 * g), (4 * g, 2 * g)])
        self.assertEqual(self.pieces(12 * g), [(0, 2 * g), (4 * g, 4 * g), (8 * g, 4 * g), (12 * g, 2 * g)])

    def test_every_piece_is_a_naturally_aligned_power_of_two(self):
        for mib in (2, 1536, 2560, 2816, 3072, 5000, 65536, 99998):
            size = mib << 20
            pieces = self.pieces(size)
            self.assertEqual(sum(n for _, n in pieces), size)
            low = size if size < runqemu.Q35_LOWMEM_ALL_BELOW else runqemu.Q35_LOWMEM
            for gpa, n in pieces:
                self.assertEqual(n & (n - 1), 0)
                self.assertEqual(gpa % n, 0)
                self.assertTrue(gpa + n <= low or gpa >= 4 * self.GiB, (mib, gpa, n))

    def test_odd_sizes_refused(self):
        self.assertIsNone(self.pieces(0))
        self.assertIsNone(self.pieces((1 << 20) * 3))

    def test_cases_get_the_alias_where_it_fits(self):
        snp = {"args": "platform=snp-emu", "mem": "4G"}
        self.assertTrue(run.c_bit_alias(snp))
        self.assertFalse(run.c_bit_alias(dict(snp, c_bit_alias=False)))
        self.assertFalse(run.c_bit_alias(dict(snp, qemu=["-cpu", "max"])))
        self.assertFalse(run.c_bit_alias({"args": "platform=sim", "mem": "4G"}))


if __name__ == "__main__":
    unittest.main()
