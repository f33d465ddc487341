"""beambleu inside your own Beam pipeline: read Parquet pairs with Beam's own ReadFromParquet, score
them per system with ``beambleu.Score``, keep the results as typed rows, and write beambleu's result
document with ``beambleu.WriteResults``.

    python examples/beam_pipeline.py --input 'examples/sample/shards/*.parquet' --output result.json

Every other flag is a Beam pipeline option (``--runner PrismRunner``, ``--direct_num_workers 2``...).
The scores are ``beambleu run --group-by system``'s."""

import argparse

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

import beambleu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, help="Parquet files (a glob)")
    parser.add_argument("--output", required=True, help="the result document (JSON)")
    parser.add_argument("--metrics", nargs="+", default=["bleu", "chrf"], help="metric ids (default: bleu chrf)")
    args, beam_args = parser.parse_known_args(argv)

    with beam.Pipeline(options=PipelineOptions(beam_args)) as p:
        pairs = p | "Read" >> beam.io.ReadFromParquet(args.input)  # dicts: candidate, references, system
        results = pairs | "Score" >> beambleu.Score(metrics=args.metrics, group_by=["system"])
        # typed rows (a Beam schema): usable by Beam SQL, dataframes, or a plain Map
        _ = (results
             | "Systems" >> beam.Filter(lambda r: r.group_by == ["system"])
             | "Line" >> beam.Map(lambda r: f"{r.key[0]}\t{r.metric}\t{r.score:.2f}")
             | "Print" >> beam.Map(print))
        _ = results | "Write" >> beambleu.WriteResults(args.output)


if __name__ == "__main__":
    main()
