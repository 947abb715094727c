{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- Every row of the Spanner snapshot files, typed from its file's header as data change records
    type their values, at the read timestamp: after every change committed at or before it
    (python_udfs/spanner/snapshot.py). They wait for the stream's low watermark like a
    transaction committed then (int_spanner__snapshot_batches). -#}
{{ snapshot_rows(
    ref('stg_spanner__lines'),
    ref('int_spanner__snapshot_headers'),
    'spanner',
    "spanner_snapshot_row(new_row_lines.line, headers.header_json, new_row_lines.source_name)"
) }}
