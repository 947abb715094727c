{#- The `merge` incremental strategy of this project's models (it replaces dbt-spark's, which
    only updates and inserts): one Delta MERGE that also deletes. With config
    `merge_deletes_flagged_rows`, a model's incremental query returns the rows it recomputed and
    the old rows that no longer exist, told apart by `flag_removed_rows`; matching rows that are
    unchanged are not rewritten. With config `merge_null_safe_keys`, a NULL key column matches
    NULL (a key that may be unknown, such as a column's source type). -#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | list -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- set removal_flag = 'is_removed' if config.get('merge_deletes_flagged_rows') else none -%}
    {%- set target_partitions = merged_target_partitions(model.get('compiled_code', '')) -%}
    {%- set key_equals = '<=>' if config.get('merge_null_safe_keys') else '=' -%}
    merge into {{ target }} as target
    using {{ source }} as source
        on
    {%- for key in keys %}
            target.{{ key }} {{ key_equals }} source.{{ key }}{{ " and" if not loop.last }}
    {%- endfor %}
    {%- for predicate in (incremental_predicates or []) + target_partitions %}
            and {{ predicate }}
    {%- endfor %}
    {%- if removal_flag %}
        when matched and source.{{ removal_flag }} then delete
    {%- endif %}
    when matched and not (
    {%- for column in columns %}
            target.{{ column }} <=> source.{{ column }}{{ " and" if not loop.last }}
    {%- endfor %}
    ) then update set
    {%- for column in columns %}
        {{ column }} = source.{{ column }}{{ "," if not loop.last }}
    {%- endfor %}
    when not matched {{- " and not source." ~ removal_flag if removal_flag }} then insert (
        {{ columns | join(", ") }}
    ) values (
    {%- for column in columns %}
            source.{{ column }}{{ "," if not loop.last }}
    {%- endfor %}
    )
{%- endmacro %}


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


{#- Names, in a merging model's SQL, the only values `column` takes in the target rows that its
    MERGE may match or delete: every row the model returns lies in them. The MERGE then reads
    only those partitions of the target; Delta prunes no file by the join with the source. A
    SQL comment, because a model's compile-time results reach the materialization only through
    its compiled code; `merged_target_partitions` reads it back. -#}
{% macro merge_only_into_partitions(column, values) -%}
    {%- if values | length > 0 -%}
        -- merge target partitions: target.{{ column }} in ({{ values | join(", ") }})
    {%- endif -%}
{%- endmacro %}


{% macro merged_target_partitions(compiled_code) -%}
    {%- set named = modules.re.search(
        "-- merge target partitions: (target\\.\\w+ in \\([0-9, ]+\\))", compiled_code or ""
    ) -%}
    {{ return([named.group(1)] if named else []) }}
{%- endmacro %}
