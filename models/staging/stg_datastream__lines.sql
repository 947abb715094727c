{#- Datastream's landed lines (cdc_warehouse/landing.py), typed and named. -#}
with lines as (
    select * from {{ source('cdc_raw', 'datastream_lines') }}
),

landed_files as (
    select * from {{ source('cdc_raw', 'landed_files') }}
),

manifested_lines as (
    select * from lines
    where {{ in_manifest('landed_files') }}
),

final as (
    select
        source_name,
        file_path,
        line_number,
        {{ valid_utf8_line('line', 'load_error') }},
        landed_at,
        landing_run
    from manifested_lines
)

select * from final
