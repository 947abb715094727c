{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- Every row of the pgoutput snapshot files, typed from its file's header as TupleData text
    values are, at the slot's consistent point: after the changes committed before it, before
    those committed at it or later (python_udfs/pgoutput/snapshot.py). They are changes as they
    land: int_pgoutput__changes takes them. -#}
{{ snapshot_rows(
    ref('stg_pgoutput__lines'),
    ref('int_pgoutput__snapshot_headers'),
    'pgoutput',
    "pgoutput_snapshot_row(new_row_lines.line, headers.header_json, new_row_lines.source_name)"
) }}
