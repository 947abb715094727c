{#- The three adapter macros this project overrides, for every model and every test. dbt calls
    `get_merge_sql` and `get_where_subquery` through adapter.dispatch, which takes a root
    project's `spark__` macro over the one dbt or the adapter ships; dbt-spark calls
    `get_insert_into_sql` by its name, which a root project's macro of that name takes. So these
    replace them everywhere, with no config naming them.
    - `spark__get_merge_sql`: the MERGE of the `merge` incremental strategy. dbt-spark's updates
      and inserts only; this one deletes too, skips unchanged rows, prunes the target's
      partitions and is left out when the model found nothing to merge (docs/decisions/006).
      dbt-spark's own: package dbt-spark,
      dbt/include/spark/macros/materializations/incremental/strategies.sql.
    - `spark__get_where_subquery`: the relation a generic test reads. dbt-spark has none, so
      dbt's `default__get_where_subquery` would apply (package dbt-adapters,
      dbt/include/global_project/macros/materializations/tests/where_subquery.sql); this one
      reads only the rows the build rewrote (docs/decisions/008).
    - `get_insert_into_sql`: the insert of the `append` incremental strategy. The same insert of
      the model's rows in the target's column order as dbt-spark's, left out when the model
      found nothing to write (same file of dbt-spark as `get_merge_sql`). -#}

{#- The `merge` incremental strategy of this project's models (it replaces dbt-spark's, which only
    updates and inserts): one Delta MERGE that also deletes. With config
    `merge_deletes_flagged_rows`, a model's incremental query returns the rows it recomputed and the
    old rows that no longer exist, told apart by a boolean column `is_removed`; matching rows that
    are unchanged are not rewritten. With config `merge_source_holds_only_changes`, the model has
    already left out the rows equal to the stored ones, so a match is updated with no comparison,
    and the MERGE reads only the target's key columns (docs/decisions/006). A model whose rows are
    few says so (`broadcast_merge_source`), and the MERGE broadcasts them; one that names the
    partitions or keys its rows lie in (`merge_only_into_partitions`, `merge_only_into_keys`) has
    the MERGE read only those target rows. With config `merge_null_safe_keys`, a NULL key column
    matches NULL (a key that may be unknown, such as a column's source type). A model that found
    nothing to merge (`nothing_to_write`) gets a statement that reads and writes nothing in the
    MERGE's place. -#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) -%}
    {%- set compiled_code = model.get('compiled_code', '') -%}
    {%- if marked_nothing_to_write(compiled_code) -%}
        {{ return("select 'nothing to merge into " ~ target ~ "' as outcome") }}
    {%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | list -%}
    {%- set keys = [unique_key] if unique_key is string else unique_key -%}
    {%- set removal_flag = 'is_removed' if config.get('merge_deletes_flagged_rows') else none -%}
    {%- set target_filters = merged_target_partitions(compiled_code)
        + merged_target_keys(compiled_code) -%}
    {%- set key_equals = '<=>' if config.get('merge_null_safe_keys') else '=' -%}
    {%- set unchanged_match_skipped = '' if config.get('merge_source_holds_only_changes')
        else ' and not (' ~ rows_equal('target', 'source', columns) ~ ')' -%}
    merge into {{ target }} as target
    {%- if merge_source_is_broadcast(compiled_code) %}
        using (select /*+ broadcast(merge_source) */ * from {{ source }} as merge_source) as source
    {%- else %}
        using {{ source }} as source
    {%- endif %}
        on
    {%- for key in keys %}
            target.{{ key }} {{ key_equals }} source.{{ key }}{{ " and" if not loop.last }}
    {%- endfor %}
    {%- for predicate in (incremental_predicates or []) + target_filters %}
            and {{ predicate }}
    {%- endfor %}
    {%- if removal_flag %}
        when matched and source.{{ removal_flag }} then delete
    {%- endif %}
    when matched {{- unchanged_match_skipped }} then update set
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


{#- Every generic test's model goes through this (dbt's hook for the `where` config). No alias:
    tests alias their model themselves, and Spark takes a subquery without one. -#}
{% macro spark__get_where_subquery(relation) -%}
    {%- set scoped = rows_under_test(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- if where -%}
        {{ return("(select * from " ~ scoped ~ " where " ~ where ~ ")") }}
    {%- endif -%}
    {{ return(scoped) }}
{%- endmacro %}


{#- The `append` incremental strategy's insert: the model's rows appended in the target's column
    order; a model that found nothing to write (`nothing_to_write`) gets a statement that reads
    and writes nothing in its place. -#}
{% macro get_insert_into_sql(source_relation, target_relation) -%}
    {%- if marked_nothing_to_write(model.get('compiled_code', '')) -%}
        {{ return("select 'nothing to append to " ~ target_relation ~ "' as outcome") }}
    {%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(target_relation) | map(attribute='quoted') -%}
    insert into table {{ target_relation }}
    select {{ columns | join(', ') }} from {{ source_relation }}
{%- endmacro %}
