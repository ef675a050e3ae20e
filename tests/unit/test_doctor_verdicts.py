"""`alp doctor`'s verdicts (alpd.domain.doctor): every warn and fail carries a fix, and the
thresholds hold for any figures."""

from __future__ import annotations

import stat

from hypothesis import given
from hypothesis import strategies as st

from alpd.domain import doctor
from protocol import messages as m

sizes = st.integers(min_value=0, max_value=2**50)


@given(free=sizes, threshold=sizes)
def test_the_disk_warns_exactly_under_the_threshold(free: int, threshold: int) -> None:
    found = doctor.disk_check("/home/a/.alp", free, free + 1, threshold)
    assert found.status == ("warn" if free < threshold else "ok")
    assert (found.fix is not None) == (found.status == "warn")


@given(mode=st.integers(min_value=0, max_value=0o777), owner=st.integers(0, 3))
def test_the_socket_is_ok_only_private_and_ours(mode: int, owner: int) -> None:
    found = doctor.socket_check(doctor.SocketFacts("/run/alp.sock", stat.S_IFSOCK | mode, owner, 0))
    private = mode & ~0o600 == 0
    assert (found.status == "ok") == (private and owner == 0)
    assert found.status == "ok" or found.fix


def test_a_plain_file_is_no_socket() -> None:
    found = doctor.socket_check(doctor.SocketFacts("/run/alp.sock", stat.S_IFREG | 0o600, 0, 0))
    assert found.status == "fail"


def facts(name: str, program: str | None, used_by: tuple[str, ...] = ()) -> doctor.RuntimeFacts:
    return doctor.RuntimeFacts(
        name=name,
        program=program,
        wanted=name,
        install_hint="install it",
        used_by=used_by or (name,),
        login=None,
        login_file="/h/.claude/.credentials.json",
    )


def test_a_missing_runtime_fails_only_when_needed() -> None:
    assert doctor.runtime_checks(facts("codex", None), any_found=True)[0].status == "warn"
    needed = facts("codex", None, ("codex", "reviewer"))
    assert doctor.runtime_checks(needed, any_found=True)[0].status == "fail"
    assert doctor.runtime_checks(facts("codex", None), any_found=False)[0].status == "fail"


def test_a_found_runtime_without_login_warns_with_the_way_in() -> None:
    found, login = doctor.runtime_checks(facts("claude", "/bin/claude"), any_found=True)
    assert found.status == "ok" and login.status == "warn"
    assert login.fix is not None and "/login" in login.fix


def test_a_failing_task_fails_with_its_last_error() -> None:
    task = m.TaskState(name="scheduler", state="failing", last_error="OSError: disk")
    found = doctor.task_check(task)
    assert found.status == "fail" and "OSError: disk" in found.detail and found.fix


def test_channels_need_a_paired_sender_and_a_working_poller() -> None:
    polling = m.ChannelState(channel="telegram", configured=True, state="polling")
    assert doctor.channel_check(polling).status == "warn"
    refused = m.ChannelState(channel="telegram", configured=True, state="refused")
    assert doctor.channel_check(refused).status == "fail"


def test_alp_for_runs() -> None:
    assert doctor.alp_for_runs_check(None, None).status == "fail"
    assert doctor.alp_for_runs_check("/v/bin/alp", None).status == "warn"
    assert doctor.alp_for_runs_check("/v/bin/alp", "/v/bin/alp").status == "ok"


def test_the_meaning_index_line_says_how_to_get_a_model_and_what_answers() -> None:
    missing = m.MeaningIndexState(
        state="off", embedder="model2vec", reason="no model2vec model at /m (missing x); put one"
    )
    check = doctor.meaning_check(missing)
    assert check.status == "ok" and "keyword only" in check.detail
    assert check.fix is not None and "alp model fetch" in check.fix
    off = doctor.meaning_check(m.MeaningIndexState(state="off", embedder="off", reason="off"))
    assert off.fix is None
    stale = m.MeaningIndexState(
        state="stale", embedder="openai", model="nomic", embedded=3, total=9, rate=1.5
    )
    assert doctor.meaning_check(stale).detail == (
        "rebuilding for the new model nomic (3 of 9 chunks, 1.5/s); the previous model answers "
        "meanwhile"
    )
    building = m.MeaningIndexState(state="building", embedder="model2vec", embedded=1, total=4)
    assert doctor.meaning_check(building).detail == "building the meaning index: 1 of 4 chunks"
    failing = m.MeaningIndexState(state="building", embedder="openai", error="HTTP 503")
    assert doctor.meaning_check(failing).status == "warn"
