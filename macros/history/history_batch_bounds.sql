{#- The landing runs int_cdc__key_states applies in this build, at compile time:
    - `to_run`: the newest landing run its inputs hold (the change log, truncates, key
      successions, Spanner table columns; each an append-only table, whose MAX Delta reads
      from file statistics);
    - `states_through`: the newest run the key states have applied (-1 on a full build);
    - `from_run`: the oldest run the states, cdc_history or cdc_current have applied (their
      commits' marks, macros/utils/applied_through.sql): a mart that missed a build (killed or
      failed after the states were written) receives every key changed since its own mark, as
      a recomputation (docs/decisions/011). -1 recomputes every key. -#}
{% macro history_batch_bounds() -%}
    {%- set input_runs = [] -%}
    {%- for input in [
        ref('int_cdc__change_log'),
        ref('int_cdc__truncates'),
        ref('int_cdc__key_successions'),
        ref('int_spanner__table_columns'),
    ] -%}
        {%- do input_runs.append(max_processed(input, 'landing_run') | int) -%}
    {%- endfor -%}
    {%- set bounds = {'to_run': input_runs | max, 'states_through': -1, 'from_run': -1} -%}
    {%- if is_incremental() and execute -%}
        {%- set marks = [applied_through(this)] -%}
        {%- for mart in ['cdc_history', 'cdc_current'] -%}
            {%- set relation = adapter.get_relation(
                database=this.database, schema=target.schema, identifier=mart
            ) -%}
            {%- do marks.append(applied_through(relation)) -%}
        {%- endfor -%}
        {%- do bounds.update({'states_through': marks[0] if marks[0] is number else -1}) -%}
        {%- if none not in marks -%}
            {%- do bounds.update({'from_run': marks | min}) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(bounds) }}
{%- endmacro %}
