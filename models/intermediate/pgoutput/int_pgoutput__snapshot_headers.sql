{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- The header of each pgoutput snapshot file (docs/sources/pgoutput.md, "Initial snapshots"):
    the slot's consistent point, the table and its columns with their type OIDs and key flags,
    one row per file, so a row landed in a later run finds its file's header here. A header that
    does not fit is quarantined, and with no header_json every row of its file is too. -#}
{%- set processed_through = landing_runs_processed() %}

with new_first_lines as (
    select * from {{ ref('stg_pgoutput__lines') }}
    where
        landing_run > {{ processed_through }}
        and line_number = 1
        and {{ is_snapshot_file('pgoutput') }}
),

decoded_headers as (
    select
        new_first_lines.*,
        pgoutput_snapshot_header(
            new_first_lines.line, new_first_lines.source_name
        ) as decoded_header
    from new_first_lines
),

final as (
    select
        {{ decoded_header_columns('decoded_headers', 'decoded_header') }}
    from decoded_headers
)

select * from final
