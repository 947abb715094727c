{{
    config(
        partition_by=['landing_run'],
    )
}}

{#- Every row of the pgoutput snapshot files, typed from its file's header as TupleData text
    values are, at the slot's consistent point: after the changes committed before it, before
    those committed at it or later (python_udfs/pgoutput/snapshot.py). They are changes as they
    land: int_pgoutput__changes takes them. -#}
{%- set processed_through = landing_runs_processed() %}

with new_row_lines as (
    select * from {{ ref('stg_pgoutput__lines') }}
    where
        landing_run > {{ processed_through }}
        and line_number > 1
        and {{ is_snapshot_file('pgoutput') }}
),

headers as (
    -- One row per file: a run reads its new lines and this small state.
    select
        source_name,
        file_path,
        header_json
    from {{ ref('int_pgoutput__snapshot_headers') }}
),

decoded_rows as (
    select
        new_row_lines.*,
        pgoutput_snapshot_row(
            new_row_lines.line, headers.header_json, new_row_lines.source_name
        ) as snapshot_row
    from new_row_lines
    left join headers
        on
            new_row_lines.source_name = headers.source_name
            and new_row_lines.file_path = headers.file_path
),

final as (
    select
        {{ decoded_change_columns('decoded_rows', 'snapshot_row') }}
    from decoded_rows
)

select * from final
