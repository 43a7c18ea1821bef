# inflect_embed(target dir symbol): compiles every *.yaml under dir into a generated C++ source
# defining `inflect::io::embedded::<symbol>()`, a list of {file name, contents} pairs.
# Why: the device catalog must travel inside the binary so `inflect` runs from any directory.
function(inflect_embed target dir symbol)
  file(GLOB yamls CONFIGURE_DEPENDS ${dir}/*.yaml)
  list(SORT yamls)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/${symbol}.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSYMBOL=${symbol} "-DFILES=${yamls}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${yamls} ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${symbol}")
  target_sources(${target} PRIVATE ${out})
endfunction()
