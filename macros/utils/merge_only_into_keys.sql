{#- This file holds `merge_only_into_keys` and `merged_target_keys`, the writer and the reader of
    one SQL comment: its format is their contract, so they share a file. -#}

{#- Names, in a merging model's SQL, the only values `column` takes in the target rows that its
    MERGE may match or delete: the distinct values of `column` in `relation` where `condition`
    holds, a set that holds the key of every row the model returns. `key_count` bounds their
    number; beyond var('cdc_merge_key_list_max_keys') no list is named, since the query text
    grows with it. The MERGE adds the list to its condition, and Spark filters the target's rows
    by it before they are shuffled to the join that writes the changes, where Delta's join keeps
    every row of the touched files (docs/decisions/006). A SQL comment for the reason given in
    macros/utils/merge_only_into_partitions.sql; each value is a Spark string literal. -#}
{% macro merge_only_into_keys(column, relation, condition, key_count) -%}
    {%- if execute and 0 < key_count <= var('cdc_merge_key_list_max_keys') | int -%}
        {#- Backslashes doubled and line breaks written as escapes before `quote` escapes the
            quotes: no character of the list ends the comment or is read as an escape. -#}
        {%- set escaped = "replace(replace(replace(" ~ column
            ~ ", char(92), repeat(char(92), 2)), char(10), concat(char(92), 'n')),"
            ~ " char(13), concat(char(92), 'r'))" -%}
        {%- set listed = run_query(
            "select array_join(sort_array(collect_set(quote(" ~ escaped ~ "))), ', ') from "
            ~ relation ~ " where " ~ condition
        ) -%}
        -- merge target keys: target.{{ column }} in ({{ listed.columns[0].values()[0] }})
    {%- endif -%}
{%- endmacro %}


{% macro merged_target_keys(compiled_code) -%}
    {%- set named = modules.re.search(
        "-- merge target keys: (target\\.\\w+ in \\(.*\\))", compiled_code or ""
    ) -%}
    {{ return([named.group(1)] if named else []) }}
{%- endmacro %}
