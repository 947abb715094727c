{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- The header of each Spanner snapshot file (docs/sources/spanner.md, "Initial snapshots"): the
    read timestamp, the table, and every one of its columns with its type. -#}
{{ snapshot_headers(
    ref('stg_spanner__lines'),
    'spanner',
    "spanner_snapshot_header(line, source_name)",
    extra_fields=['column_names']
) }}
