"""``beambleu run`` gives the local runner pipeline options whose view of each options class is made once
(``run._OneViewEach``, issue 34: Beam asks for a few hundred views while it builds and runs a job). Such
options must read, change and copy exactly as Beam's own."""

from __future__ import annotations

import copy

from apache_beam.options.pipeline_options import (DebugOptions, DirectOptions, PipelineOptions, StandardOptions,
                                                  TypeOptions)

from beambleu.commands.run import _OneViewEach

FLAGS = ["--direct_num_workers=3", "--experiments=a", "--type_check_strictness=ALL_REQUIRED", "--unknown_flag=1"]


def _pair():
    plain = PipelineOptions(FLAGS)
    plain.view_as(StandardOptions).runner = "SomeRunner"  # a value set before, as runners.pipeline_options does
    return plain, _OneViewEach.of(plain)


def test_same_values_as_beams_own_options():
    plain, once = _pair()
    for cls in (StandardOptions, DirectOptions, DebugOptions, TypeOptions, PipelineOptions):
        assert once.view_as(cls).get_all_options() == plain.view_as(cls).get_all_options()
    assert once.view_as(DirectOptions).direct_num_workers == 3
    assert once.view_as(StandardOptions).runner == "SomeRunner"
    assert once.get_all_options(retain_unknown_options=True) == plain.get_all_options(retain_unknown_options=True)


def test_one_view_per_class():
    """The point: the second view is the first (Beam's options make a new one, parsing every flag, each time)."""
    plain, once = _pair()
    assert once.view_as(DirectOptions) is once.view_as(DirectOptions)
    assert plain.view_as(DirectOptions) is not plain.view_as(DirectOptions)


def test_changes_are_shared_both_ways():
    plain, once = _pair()
    view = once.view_as(DirectOptions)
    view.direct_num_workers = 5
    assert plain.view_as(DirectOptions).direct_num_workers == 5 == once.view_as(DirectOptions).direct_num_workers
    plain.view_as(DebugOptions).experiments.append("b")  # a list option: the same list everywhere
    assert once.view_as(DebugOptions).experiments == ["a", "b"]
    plain.view_as(TypeOptions).pipeline_type_check = False  # set after the view was made
    assert once.view_as(TypeOptions).pipeline_type_check is False


def test_deep_copy_as_beam_pipeline_makes_it():
    """``beam.Pipeline`` deep-copies its options: the copy's views share the copy's values, not the original's."""
    _, once = _pair()
    once.view_as(DirectOptions)
    dup = copy.deepcopy(once)
    assert type(dup) is _OneViewEach
    dup.view_as(DirectOptions).direct_num_workers = 7
    assert dup.view_as(DirectOptions).direct_num_workers == 7 and dup.view_as(PipelineOptions).get_all_options()[
        "direct_num_workers"] == 7
    assert once.view_as(DirectOptions).direct_num_workers == 3
