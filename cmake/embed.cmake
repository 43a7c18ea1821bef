# inflect_embed(target dir symbol): compiles every *.yaml under dir into a generated C++ source
# defining `inflect::io::embedded::<symbol>()`, a list of {file name, contents} pairs.
# Why: the device catalog must travel inside the binary so `inflect` runs from any directory.
function(inflect_embed target dir symbol)
  file(GLOB yamls CONFIGURE_DEPENDS ${dir}/*.yaml)
  list(SORT yamls)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/${symbol}.cpp)
  # A CMake list holds ';', which a shell would split: pass the files '|'-separated instead.
  string(REPLACE ";" "|" files_arg "${yamls}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} "-DFILES=${files_arg}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${yamls} ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
