{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- The header of each pgoutput snapshot file (docs/sources/pgoutput.md, "Initial snapshots"):
    the slot's consistent point, the table and its columns with their type OIDs and key flags. -#}
{{ snapshot_headers(
    ref('stg_pgoutput__lines'),
    'pgoutput',
    "pgoutput_snapshot_header(line, source_name)"
) }}
