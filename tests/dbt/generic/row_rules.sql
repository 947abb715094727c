{#- Every rule a row must keep on its own, in one read of the model: the `not_null` columns hold a
    value, and each `accepted_values` column (a column name to its values) holds one of its
    values or NULL (a NULL is the not_null rule's to forbid). A failing row names each rule it
    breaks in `broken_rules`. One test per model rather than one per column and rule, so that a
    build's tests read each mart once for these rules. -#}
{% test row_rules(model, not_null=[], accepted_values={}) %}

with checked_rows as (
    select
        {{ broken_row_rules(not_null, accepted_values) }} as broken_rules,
        *
    from {{ model }}
),

final as (
    select * from checked_rows
    where broken_rules != ''
)

select * from final

{% endtest %}
