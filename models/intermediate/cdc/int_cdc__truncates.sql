{#- Truncates delete every key of their table at their position; they are kept apart from the
    keyed change log because they name no key. A branch per family that has them
    (`source_families`, python_udfs/families.py). -#}
{%- set processed_through = landing_runs_processed() %}
{%- set truncating = source_families('truncates').split(',') %}

with
{%- for item in truncating %}
    {%- set family, model = item.split(':') %}
    {{ family }}_truncates as (
        {{ truncates_of(ref(model), family, processed_through) }}
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
