{{ config(materialized='view') }}

{#- Every source family's changes in the one shape of docs/decisions/001, a branch per family
    of the registry (`source_families`, python_udfs/families.py): its changes come as a view in
    that shape already, or as the table of the rows its transactions released, keyed here.
    Nothing downstream names a family. -#}
with
{%- for item in source_families('keyed_changes').split(',') %}
    {%- set family, model = item.split(':') %}
    {{ family }}_changes as (
        select * from {{ ref(model) }}
    ),
{% endfor %}
{%- for item in source_families('change_rows').split(',') %}
    {%- set family, model = item.split(':') %}
    {{ family }}_rows as (
        select * from {{ ref(model) }}
    ),

    {{ family }}_changes as (
        {{ keyed_changes(family ~ '_rows', family) }}
    ),
{% endfor %}
final as (
    -- Each branch names its columns: a union matches columns by position.
    {%- for family in source_families().split(',') %}
        select
            {{ change_log_select(family ~ '_changes', indent=12) }}
        from {{ family }}_changes
        {%- if not loop.last %}
            union all
        {%- endif %}
    {%- endfor %}
)

select * from final
