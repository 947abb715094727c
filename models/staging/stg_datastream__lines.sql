with source as (
    select * from {{ source('cdc_raw', 'datastream_lines') }}
),

final as (
    select
        source_name,
        file_path,
        line_number,
        line,
        load_error,
        landed_at,
        landing_run
    from source
)

select * from final
