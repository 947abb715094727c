{#- Lines of landing runs this model has not seen, flattened by the family's UDF into the
    change-log fields (docs/decisions/001) or an error; committed_at, epoch microseconds from
    the UDF, becomes a timestamp. -#}
{% macro flattened_new_lines(lines, flatten_call, extra_fields=[]) -%}
    {%- set processed_through = max_processed(this, 'landing_run') if is_incremental() else -1 %}
{%- set fields = change_fields().split(',') | reject('equalto', 'committed_at') | list
    + extra_fields %}

with new_lines as (
    select * from {{ lines }}
    where landing_run > {{ processed_through }}
),

flattened as (
    select
        new_lines.*,
        {{ flatten_call }} as flattened_event
    from new_lines
),

final as (
    select
        flattened.source_name,
        flattened.file_path,
        flattened.line_number,
    {%- for field in fields %}
            flattened.flattened_event.{{ field }},
    {%- endfor %}
        flattened.landed_at,
        flattened.landing_run,
        timestamp_micros(flattened.flattened_event.committed_at) as committed_at,
        coalesce(flattened.load_error, flattened.flattened_event.error) as error,
        case
            when
                flattened.load_error is not null
                or flattened.flattened_event.error is not null
                then flattened.line
        end as raw_line
    from flattened
)

select * from final
{%- endmacro %}
