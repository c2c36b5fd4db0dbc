import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;

// beside the alternatives: two members that do mix TAG and SQL92
public class Orders {
    void start() throws Exception {
        DefaultMQPushConsumer tags = new DefaultMQPushConsumer("orders-group");
        // ruleid: SG104
        tags.subscribe("Orders", "created");
        tags.start();
        DefaultMQPushConsumer sql = new DefaultMQPushConsumer("orders-group");
        sql.subscribe("Orders", MessageSelector.bySql("amount > 10"));
        sql.start();
    }
}
