{{
    config(
        materialized='incremental',
        incremental_strategy='append',
        post_hook="{{ row_rules_constraint(
            'quarantine_rows_say_where_and_why',
            not_null=['source_system', 'source_name', 'file_path', 'line_number', 'reason'],
        ) }}",
    )
}}

{#- Every decoding model's rejected rows, a branch per model of the registry
    (`source_families`, python_udfs/families.py), of the families this build processes. -#}
{%- set processed_through = landing_runs_processed() %}
{%- set decoded = built_source_families('decoded') %}

with
{%- for item in decoded %}
    {%- set family, model = item.split(':') %}
    {{ model }}_rejects as (
        select
            '{{ family }}' as source_system,
            source_name,
            file_path,
            line_number,
            error as reason,
            raw_line,
            landed_at,
            landing_run
        from {{ ref(model) }}
        where error is not null and landing_run > {{ processed_through }}
    ),
{% endfor %}
final as (
    {%- for item in decoded %}
        select * from {{ item.split(':')[1] }}_rejects
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select * from final
