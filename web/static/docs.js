// Swagger UI on the service's own OpenAPI description (served from the swagger-ui-bundle package).
window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
