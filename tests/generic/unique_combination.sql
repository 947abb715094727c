{#- No two rows share these columns' values. -#}
{% test unique_combination(model, columns) %}

with counted as (
    select
        {{ columns | join(', ') }},
        count(*) as copies
    from {{ model }}
    group by {{ columns | join(', ') }}
),

final as (
    select * from counted
    where copies > 1
)

select * from final

{% endtest %}
