{#- A merging model's incremental rows: `kept` (written) and `removed` (deleted; only their
    unique key columns matter), the relations' columns being the table's. -#}
{% macro flag_removed_rows(kept, removed) -%}
    select
        *,
        false as is_removed
    from {{ kept }}
    union all
    select
        *,
        true as is_removed
    from {{ removed }}
{%- endmacro %}
