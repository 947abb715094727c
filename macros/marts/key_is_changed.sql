{#- Whether the key of the row aliased `alias` is in `changed_keys`, cdc_history's set of keys
    to recompute. `hint` is the set's broadcast_hint: in a routine run the set is small next to
    the tables it filters, and broadcasting it spares shuffling the whole table to the join. -#}
{% macro key_is_changed(alias, changed_keys, hint) -%}
    exists (
        select {{ hint }} 1 from {{ changed_keys }} as changed_keys
        where {{ same_key('changed_keys', alias) }}
    )
{%- endmacro %}
