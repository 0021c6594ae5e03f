/** The /docs page: Swagger UI, bundled from swagger-ui-dist, rendering this gateway's /openapi.json. */
import 'swagger-ui-dist/swagger-ui.css';
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-bundle.js';

SwaggerUIBundle({ url: 'openapi.json', dom_id: '#docs', deepLinking: true });
