# Warning and sanitizer flags for Flow's own targets. Generated ANTLR code does not use these.
add_library(flow_warnings INTERFACE)
target_compile_options(flow_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)
if(FLOW_WERROR)
  target_compile_options(flow_warnings INTERFACE -Werror)
endif()

if(FLOW_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# flow_target_defaults(target): the flags every Flow library, tool and test gets.
function(flow_target_defaults target)
  target_link_libraries(${target} PRIVATE flow_warnings)
endfunction()
