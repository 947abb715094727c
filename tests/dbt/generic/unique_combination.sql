{#- No two rows share these columns' values. An append-only model names the column holding the
    landing run a row was appended in (`appended_in`), so a build that tests what it wrote
    checks only the values its own rows hold (macros/marts/rows_sharing_appended_values.sql). -#}
{% test unique_combination(model, columns, appended_in=none) %}

with counted as (
    select
        {{ columns | join(', ') }},
        count(*) as copies
    from {{ rows_sharing_appended_values(model, columns, appended_in) }}
    group by {{ columns | join(', ') }}
),

final as (
    select * from counted
    where copies > 1
)

select * from final

{% endtest %}
