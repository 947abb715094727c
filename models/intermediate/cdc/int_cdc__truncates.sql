{#- Truncates delete every key of their table at their position; they are kept apart from the
    keyed change log because they name no key. A branch per family that has them
    (`source_families`, python_udfs/families.py). -#}
{%- set processed_through = landing_runs_processed() %}
{%- set truncating = source_families('truncates').split(',') %}

with
{%- for item in truncating %}
    {%- set family, model = item.split(':') %}
    {{ family }}_truncates as (
        select
            '{{ family }}' as source_system,
            source_name,
            source_table,
            sort_pos,
            committed_at,
            txn_id,
            event_id,
            landing_run
        from {{ ref(model) }}
        where error is null and op = 'truncate' and landing_run > {{ processed_through }}
    ),
{% endfor %}
final as (
    {%- for item in truncating %}
        select * from {{ item.split(':')[0] }}_truncates
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select * from final
