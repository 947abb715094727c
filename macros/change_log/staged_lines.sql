{#- Staging: a family's raw landed lines, typed and named. -#}
{% macro staged_lines(raw_table) -%}
with source as (
    -- Runs the manifest lists: an interrupted landing's lines wait for the run that finishes it.
    select * from {{ source('cdc_raw', raw_table) }}
    where landing_run <= (select max(landing_run) from {{ source('cdc_raw', 'landed_files') }})
),

final as (
    select
        source_name,
        file_path,
        line_number,
        -- Files are read as bytes: a line that is not UTF-8 would fail the decoders' Arrow
        -- batch (and with it the run), so it is made valid here and quarantined below.
        make_valid_utf8(line) as line,
        coalesce(
            load_error,
            case
                when not is_valid_utf8(line)
                    then 'not valid UTF-8 (invalid bytes shown as U+FFFD in the line)'
            end
        ) as load_error,
        landed_at,
        landing_run
    from source
)

select * from final
{%- endmacro %}
