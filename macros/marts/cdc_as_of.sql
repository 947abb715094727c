{#- The state of every key as of a moment, from history: the version valid then. -#}
{% macro cdc_as_of(moment, history=none) -%}
    (
        select * from {{ history or ref('cdc_history') }}
        where
            valid_from <= timestamp('{{ moment }}')
            and (valid_to is null or valid_to > timestamp('{{ moment }}'))
    )
{%- endmacro %}
